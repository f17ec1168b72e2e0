// Sign-in as the API does it: e-mail and password (POST /v1/login/), the two-factor step
// when the account has it (202, then POST /v1/totp/login/), or a passkey
// (POST /v1/passkeys/login/options/ then /v1/passkeys/login/). Errors are the API's own
// words; a throttle's seconds count down before the form can be sent again.
import { useEffect, useId, useState, type FormEvent } from 'react';
import { api, ApiError, unwrap } from '../../api/client';
import { session } from '../../api/session';
import { credentialJson, passkeysSupported, requestOptions } from '../../api/webauthn';

interface Problem {
  words: string;
  /** When the API throttled or locked: the moment the form may be sent again. */
  until: number | null;
}

function problemOf(e: unknown): Problem {
  if (e instanceof ApiError) {
    let seconds = e.retryAfterSeconds;
    if (e.status === 429 && seconds === null) {
      const m = /(\d+)\s+(second|minute)/.exec(e.message);
      if (m) seconds = Number(m[1]) * (m[2] === 'minute' ? 60 : 1);
    }
    return { words: e.message, until: e.status === 429 && seconds ? Date.now() + seconds * 1000 : null };
  }
  if (e instanceof DOMException) return { words: `The passkey was not used (${e.message}).`, until: null };
  return { words: 'The service could not be reached. Try again in a moment.', until: null };
}

function useCountdown(until: number | null): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!until) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [until]);
  return until ? Math.max(0, Math.ceil((until - now) / 1000)) : 0;
}

export function SignInView() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  const [challenge, setChallenge] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [problem, setProblem] = useState<Problem | null>(session.endedBecause() ? { words: `Signed out: ${session.endedBecause()}`, until: null } : null);
  const [busy, setBusy] = useState(false);
  const wait = useCountdown(problem?.until ?? null);
  const errorId = useId();

  const attempt = async (fn: () => Promise<void>) => {
    setBusy(true);
    setProblem(null);
    try {
      await fn();
    } catch (e) {
      setProblem(problemOf(e));
    } finally {
      setBusy(false);
    }
  };

  const signIn = (e: FormEvent) => {
    e.preventDefault();
    void attempt(async () => {
      const r = await api.POST('/v1/login/', { body: { email, password, remember_me: remember } });
      const data = unwrap(r);
      // 200 signs in; 202 asks for the second factor.
      if ('challenge_id' in data) {
        setChallenge(data.challenge_id);
        setCode('');
      } else session.start(data.token, remember);
    });
  };

  const verify = (e: FormEvent) => {
    e.preventDefault();
    void attempt(async () => {
      const data = unwrap(await api.POST('/v1/totp/login/', { body: { challenge_id: challenge!, code: code.trim() } }));
      session.start(data.token, remember);
    });
  };

  const withPasskey = () =>
    void attempt(async () => {
      const options = unwrap(await api.POST('/v1/passkeys/login/options/', { body: email ? { email } : {} }));
      const credential = (await navigator.credentials.get({ publicKey: requestOptions(options.public_key) })) as PublicKeyCredential | null;
      if (!credential) throw new DOMException('no passkey was chosen', 'NotAllowedError');
      const data = unwrap(await api.POST('/v1/passkeys/login/', { body: { ceremony_id: options.ceremony_id, credential: credentialJson(credential), remember_me: remember } }));
      session.start(data.token, remember);
    });

  const blocked = busy || wait > 0;
  const alert = problem && (
    <div id={errorId} role="alert" className="error">
      <p>{problem.words}</p>
      {wait > 0 && <p>You can try again in {wait} s.</p>}
    </div>
  );

  return (
    <main className="sign-in" id="main">
      <h1>Sign in to mm-metrics</h1>
      {challenge === null ? (
        <form onSubmit={signIn} aria-describedby={problem ? errorId : undefined}>
          <label>
            Email
            <input type="email" name="email" autoComplete="username webauthn" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <label>
            Password
            <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
          <label className="check">
            <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} /> Keep me signed in on this browser
          </label>
          {alert}
          <button type="submit" disabled={blocked}>Sign in</button>
          {passkeysSupported() && (
            <button type="button" className="secondary" disabled={blocked} onClick={withPasskey}>
              Sign in with a passkey
            </button>
          )}
        </form>
      ) : (
        <form onSubmit={verify} aria-describedby={problem ? errorId : undefined}>
          <p>This account has two-factor authentication. Enter the code your authenticator app shows.</p>
          <label>
            Authentication code
            <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]*" required autoFocus value={code} onChange={(e) => setCode(e.target.value)} />
          </label>
          {alert}
          <button type="submit" disabled={blocked}>Verify</button>
          <button type="button" className="secondary" onClick={() => { setChallenge(null); setProblem(null); }}>
            Back
          </button>
        </form>
      )}
    </main>
  );
}
