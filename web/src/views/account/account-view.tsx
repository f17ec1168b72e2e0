// Account: who is signed in, the organizations the API counts them in, and adding a passkey
// (the password, and the code with two factors on), for signing in without a password.
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { useScope } from '../../api/organizations';
import { creationOptions, credentialJson, passkeysSupported } from '../../api/webauthn';
import { useSessionInfo } from '../../api/session-info';
import { fmtTime } from '../../ui/format';
import { Panel } from '../../ui/query-state';

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
      {passkeysSupported() && <AddPasskey />}
    </div>
  );
}

function AddPasskey() {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [name, setName] = useState('');
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setMessage(null);
    try {
      const options = unwrap(await api.POST('/v1/user/passkeys/options/', { body: { password, ...(code ? { code } : {}) } }));
      const credential = (await navigator.credentials.create({ publicKey: creationOptions(options.public_key) })) as PublicKeyCredential | null;
      if (!credential) throw new Error('No passkey was made.');
      unwrap(await api.POST('/v1/user/passkeys/', { body: { ceremony_id: options.ceremony_id, credential: credentialJson(credential), ...(name ? { name } : {}) } }));
      setMessage({ text: 'Passkey added. You can sign in with it.', error: false });
      setPassword('');
      setCode('');
    } catch (err) {
      setMessage({ text: (err as Error).message, error: true });
    }
  };
  return (
    <Panel title="Add a passkey">
      <form className="stack" onSubmit={submit}>
        <label>
          Password
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <label>
          Authentication code (with two factors on)
          <input inputMode="numeric" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value)} />
        </label>
        <label>
          Passkey name
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <button type="submit">Add a passkey</button>
        {message && <p role={message.error ? 'alert' : 'status'} className={message.error ? 'error' : undefined}>{message.text}</p>}
      </form>
    </Panel>
  );
}
