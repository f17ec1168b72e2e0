// Account (specification part 1's Account area; addendum section 3): who is signed in and the
// organizations the API counts them in; the password; two-factor authentication (set up
// with a QR code, confirmed with a code, turned off); API keys (made with their scopes, the
// secret shown once, revoked); passkeys (added, listed, removed). Every change asks what the
// API asks (the password, and the code with two factors on) and shows the API's words.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { renderSVG } from 'uqr';
import { api, unwrap, type Schemas } from '../../api/client';
import { useScope } from '../../api/organizations';
import { creationOptions, credentialJson, passkeysSupported } from '../../api/webauthn';
import { useSessionInfo } from '../../api/session-info';
import { fmtTime } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column } from '../../ui/table';
import { ConfirmButton } from '../../ui/confirm-button';

type Scope = Schemas['ApiKey']['scopes'][number];
/** What each scope lets a key do (addendum section 3); every scope of the document, no other. */
const SCOPES: Record<Scope, string> = {
  'metrics:read': 'read the metrics endpoints',
  'reported_metrics:write': 'push reported metrics',
};

export default function AccountView() {
  const info = useSessionInfo();
  const scope = useScope();
  return (
    <div className="panels">
      <Panel title="Signed in">
        {info.data && (
          <dl className="facts">
            <dt>Name</dt><dd>{info.data.user?.first_name} {info.data.user?.last_name}</dd>
            <dt>Email</dt><dd>{info.data.user?.email}</dd>
            <dt>Session idles out</dt><dd>{fmtTime(info.data.expiry)} UTC</dd>
            <dt>Organizations</dt><dd>{(scope.data?.organizations ?? []).map((o) => `${o.name} (${o.kind === 'market_maker' ? 'market maker' : 'project'})`).join(', ') || 'none'}</dd>
          </dl>
        )}
      </Panel>
      <TwoFactor />
      <ApiKeys />
      <Passkeys />
      <ChangePassword />
    </div>
  );
}

/** A form's outcome: the API's words on failure, ours on success. */
type Outcome = { text: string; error: boolean } | null;

function OutcomeLine({ outcome }: { outcome: Outcome }) {
  if (!outcome) return null;
  return <p role={outcome.error ? 'alert' : 'status'} className={outcome.error ? 'error' : undefined}>{outcome.text}</p>;
}

/** Runs a form's call, its outcome shown: the error's message, or `done`'s text. */
function useFormCall(): [Outcome, (e: FormEvent, call: () => Promise<string>) => Promise<void>] {
  const [outcome, setOutcome] = useState<Outcome>(null);
  const run = async (e: FormEvent, call: () => Promise<string>) => {
    e.preventDefault();
    setOutcome(null);
    try {
      setOutcome({ text: await call(), error: false });
    } catch (err) {
      setOutcome({ text: (err as Error).message, error: true });
    }
  };
  return [outcome, run];
}

function PasswordInput({ value, onChange, label = 'Password', autoComplete = 'current-password' }: { value: string; onChange: (v: string) => void; label?: string; autoComplete?: string }) {
  return (
    <label>
      {label}
      <input type="password" autoComplete={autoComplete} required value={value} onChange={(e) => onChange(e.target.value)} />
    </label>
  );
}

function CodeInput({ value, onChange, label = 'Authentication code (with two factors on)', required = false }: { value: string; onChange: (v: string) => void; label?: string; required?: boolean }) {
  return (
    <label>
      {label}
      <input inputMode="numeric" autoComplete="one-time-code" required={required} value={value} onChange={(e) => onChange(e.target.value)} />
    </label>
  );
}

function TwoFactor() {
  const client = useQueryClient();
  const status = useQuery({ queryKey: ['totp'], queryFn: async () => unwrap(await api.GET('/v1/totp/')) });
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [setup, setSetup] = useState<{ secret: string; otpauth_url: string } | null>(null);
  const [outcome, run] = useFormCall();
  const changed = async (text: string) => {
    setPassword('');
    setCode('');
    setSetup(null);
    await client.invalidateQueries({ queryKey: ['totp'] });
    return text;
  };
  let body: ReactNode;
  if (status.data?.enabled) {
    body = (
      <form className="stack" aria-label="Turn two-factor authentication off" onSubmit={(e) => run(e, async () => {
        unwrap(await api.POST('/v1/totp/disable/', { body: { password, code } }));
        return changed('Two-factor authentication is off: signing in asks for the password only.');
      })}>
        <p>On: signing in with the password also asks for a code from your authenticator app.</p>
        <PasswordInput value={password} onChange={setPassword} />
        <CodeInput value={code} onChange={setCode} label="Authentication code" required />
        <button type="submit">Turn two-factor authentication off</button>
      </form>
    );
  } else if (setup) {
    body = (
      <form className="stack" aria-label="Confirm two-factor authentication" onSubmit={(e) => run(e, async () => {
        unwrap(await api.POST('/v1/totp/confirm/', { body: { code } }));
        return changed('Two-factor authentication is on: the next sign-in asks for a code.');
      })}>
        <p>Scan this code with an authenticator app, or enter the key by hand, then give the code it shows.</p>
        <img className="qr" width={192} height={192} alt="QR code of the two-factor key" src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(renderSVG(setup.otpauth_url))}`} />
        <p>Key: <code>{setup.secret}</code></p>
        <CodeInput value={code} onChange={setCode} label="Authentication code" required />
        <button type="submit">Turn two-factor authentication on</button>
      </form>
    );
  } else {
    body = (
      <form className="stack" aria-label="Set up two-factor authentication" onSubmit={(e) => run(e, async () => {
        setSetup(unwrap(await api.POST('/v1/totp/setup/', { body: { password } })));
        setPassword('');
        return 'A new key: not in use until confirmed with a code.';
      })}>
        <p>Off: signing in asks for the password only.</p>
        <PasswordInput value={password} onChange={setPassword} />
        <button type="submit">Set up two-factor authentication</button>
      </form>
    );
  }
  return (
    <Panel title="Two-factor authentication">
      <QueryState query={status}>{() => body}</QueryState>
      <OutcomeLine outcome={outcome} />
    </Panel>
  );
}

type ApiKey = Schemas['ApiKey'];

function ApiKeys() {
  const client = useQueryClient();
  const keys = useQuery({ queryKey: ['api-keys'], queryFn: async () => unwrap(await api.GET('/v1/user/api-keys/')) });
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['metrics:read']);
  const [expires, setExpires] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  /** The key just made, by its id: shown until it is revoked or another is made. */
  const [made, setMade] = useState<{ id: number; key: string } | null>(null);
  const revoke = useMutation({
    mutationFn: async (id: number) => unwrap(await api.DELETE('/v1/user/api-keys/{id}/', { params: { path: { id } } })),
    onSuccess: (_, id) => setMade((m) => (m?.id === id ? null : m)),
    onSettled: () => client.invalidateQueries({ queryKey: ['api-keys'] }),
  });
  const [outcome, run] = useFormCall();
  const columns: Column<ApiKey>[] = [
    { key: 'name', label: 'Name', value: (k) => k.name },
    { key: 'prefix', label: 'Starts with', value: (k) => k.prefix, render: (k) => <code>{k.prefix}</code> },
    { key: 'scopes', label: 'Scopes', value: (k) => k.scopes.join(', ') },
    { key: 'created', label: 'Made (UTC)', value: (k) => k.created_at, render: (k) => fmtTime(k.created_at) },
    { key: 'expires', label: 'Expires (UTC)', value: (k) => k.expires_at, render: (k) => fmtTime(k.expires_at) },
    { key: 'used', label: 'Last used (UTC)', value: (k) => k.last_used_at, render: (k) => fmtTime(k.last_used_at) },
    { key: 'revoke', label: 'Revoke', value: () => null, render: (k) => <ConfirmButton label={`Revoke ${k.name}`} className="" disabled={revoke.isPending} onConfirm={() => revoke.mutate(k.id)}>Revoke</ConfirmButton> },
  ];
  const submit = (e: FormEvent) => run(e, async () => {
    setMade(null);
    const r = unwrap(await api.POST('/v1/user/api-keys/', { body: { name, scopes, password, ...(code ? { code } : {}), ...(expires ? { expires_at: `${expires}T00:00:00Z` } : {}) } }));
    setMade({ id: r.id, key: r.key });
    setName('');
    setPassword('');
    setCode('');
    await client.invalidateQueries({ queryKey: ['api-keys'] });
    return `Key "${r.name}" made.`;
  });
  return (
    <Panel title="API keys" wide>
      <p className="muted">For programs: sent as <code>Authorization: Api-Key &lt;key&gt;</code>. A key acts as you within its scopes and never manages the account.</p>
      <QueryState query={keys}>
        {(list) => (list.length === 0 ? <p className="muted">No API keys.</p> : <Table caption="API keys" columns={columns} rows={list} rowKey={(k) => String(k.id)} />)}
      </QueryState>
      {revoke.isError && <p role="alert" className="error">{revoke.error.message}</p>}
      <form className="stack" aria-label="New API key" onSubmit={submit}>
        <h3>New API key</h3>
        <label>
          Key name
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {(Object.keys(SCOPES) as Scope[]).map((s) => (
            <label key={s} className="check">
              <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes(e.target.checked ? [...scopes, s] : scopes.filter((x) => x !== s))} />
              <span><code>{s}</code>: {SCOPES[s]}</span>
            </label>
          ))}
        </fieldset>
        <label>
          Expires on (UTC; at most a year, a year by default)
          {/* The days the API takes: after today, and at most a year ahead (the browser refuses others before sending). */}
          <input type="date" min={new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)} max={new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10)} value={expires} onChange={(e) => setExpires(e.target.value)} />
        </label>
        <PasswordInput value={password} onChange={setPassword} />
        <CodeInput value={code} onChange={setCode} />
        <button type="submit">Make the API key</button>
      </form>
      <OutcomeLine outcome={outcome} />
      {made && (
        <div className="secret" role="region" aria-label="The new API key">
          <p>Copy the key now: it is not shown again.</p>
          <code>{made.key}</code>
        </div>
      )}
    </Panel>
  );
}

type Passkey = Schemas['Passkey'];

function Passkeys() {
  const client = useQueryClient();
  const list = useQuery({ queryKey: ['passkeys'], queryFn: async () => unwrap(await api.GET('/v1/user/passkeys/')) });
  const remove = useMutation({
    mutationFn: async (id: number) => unwrap(await api.DELETE('/v1/user/passkeys/{id}/', { params: { path: { id } } })),
    onSettled: () => client.invalidateQueries({ queryKey: ['passkeys'] }),
  });
  const columns: Column<Passkey>[] = [
    { key: 'name', label: 'Name', value: (p) => p.name },
    { key: 'created', label: 'Added (UTC)', value: (p) => p.created_at, render: (p) => fmtTime(p.created_at) },
    { key: 'used', label: 'Last used (UTC)', value: (p) => p.last_used_at ?? null, render: (p) => fmtTime(p.last_used_at) },
    { key: 'remove', label: 'Remove', value: () => null, render: (p) => <ConfirmButton label={`Remove ${p.name}`} className="" disabled={remove.isPending} onConfirm={() => remove.mutate(p.id)}>Remove</ConfirmButton> },
  ];
  return (
    <Panel title="Passkeys">
      <QueryState query={list}>
        {(ps) => (ps.length === 0 ? <p className="muted">No passkeys.</p> : <Table caption="Passkeys" columns={columns} rows={ps} rowKey={(p) => String(p.id)} />)}
      </QueryState>
      {remove.isError && <p role="alert" className="error">{remove.error.message}</p>}
      {passkeysSupported() ? <AddPasskey /> : <p className="muted">This browser cannot make passkeys.</p>}
    </Panel>
  );
}

function AddPasskey() {
  const client = useQueryClient();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [name, setName] = useState('');
  const [outcome, run] = useFormCall();
  const submit = (e: FormEvent) => run(e, async () => {
    const options = unwrap(await api.POST('/v1/user/passkeys/options/', { body: { password, ...(code ? { code } : {}) } }));
    const credential = (await navigator.credentials.create({ publicKey: creationOptions(options.public_key) })) as PublicKeyCredential | null;
    if (!credential) throw new Error('No passkey was made.');
    unwrap(await api.POST('/v1/user/passkeys/', { body: { ceremony_id: options.ceremony_id, credential: credentialJson(credential), ...(name ? { name } : {}) } }));
    setPassword('');
    setCode('');
    await client.invalidateQueries({ queryKey: ['passkeys'] });
    return 'Passkey added. You can sign in with it.';
  });
  return (
    <form className="stack" aria-label="Add a passkey" onSubmit={submit}>
      <h3>Add a passkey</h3>
      <PasswordInput value={password} onChange={setPassword} />
      <CodeInput value={code} onChange={setCode} />
      <label>
        Passkey name
        <input value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <button type="submit">Add a passkey</button>
      <OutcomeLine outcome={outcome} />
    </form>
  );
}

function ChangePassword() {
  const [old, setOld] = useState('');
  const [next, setNext] = useState('');
  const [outcome, run] = useFormCall();
  const submit = (e: FormEvent) => run(e, async () => {
    unwrap(await api.POST('/v1/user/password/', { body: { old_password: old, new_password: next } }));
    setOld('');
    setNext('');
    return 'Password changed. Every other sign-in of this account is signed out; API keys and passkeys still work.';
  });
  return (
    <Panel title="Password">
      <form className="stack" aria-label="Change the password" onSubmit={submit}>
        <PasswordInput value={old} onChange={setOld} label="Current password" />
        <PasswordInput value={next} onChange={setNext} label="New password (at least 10 characters, not a common one)" autoComplete="new-password" />
        <button type="submit">Change the password</button>
        <OutcomeLine outcome={outcome} />
      </form>
    </Panel>
  );
}
