// WebAuthn's JSON form (what the API sends and takes) to and from the browser's binary
// form: base64url strings become ArrayBuffers on the way in and back on the way out.
import type { Schemas } from './client';

const toBytes = (s: string): Uint8Array<ArrayBuffer> => {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
};
const toText = (b: ArrayBuffer | null): string | null => {
  if (!b) return null;
  let s = '';
  for (const byte of new Uint8Array(b)) s += String.fromCharCode(byte);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

interface CredentialRef {
  id: string;
  type: 'public-key';
  transports?: AuthenticatorTransport[];
}
type Json = Record<string, unknown>;

const credentialRefs = (list: unknown): PublicKeyCredentialDescriptor[] | undefined =>
  Array.isArray(list) ? (list as CredentialRef[]).map((c) => ({ ...c, id: toBytes(c.id) })) : undefined;

export function requestOptions(json: Json): PublicKeyCredentialRequestOptions {
  return { ...(json as object), challenge: toBytes(json.challenge as string), allowCredentials: credentialRefs(json.allowCredentials) } as PublicKeyCredentialRequestOptions;
}

export function creationOptions(json: Json): PublicKeyCredentialCreationOptions {
  const user = json.user as Json;
  return {
    ...(json as object),
    challenge: toBytes(json.challenge as string),
    user: { ...user, id: toBytes(user.id as string) },
    excludeCredentials: credentialRefs(json.excludeCredentials),
    // The rest (rp, pubKeyCredParams, ...) is in the API's JSON as WebAuthn defines it.
  } as unknown as PublicKeyCredentialCreationOptions;
}

type Credential = Schemas['WebAuthnCredential'];

/**
 * The credential as WebAuthn's JSON. The document leaves the fields of `response` and
 * `clientExtensionResults` to the WebAuthn library, and the generated type reads an object
 * without listed fields as an empty one: hence the two casts.
 */
export function credentialJson(c: PublicKeyCredential): Credential {
  const r = c.response;
  const response: Json = { clientDataJSON: toText(r.clientDataJSON) };
  if (r instanceof AuthenticatorAssertionResponse) {
    Object.assign(response, { authenticatorData: toText(r.authenticatorData), signature: toText(r.signature), userHandle: toText(r.userHandle) ?? undefined });
  } else if (r instanceof AuthenticatorAttestationResponse) {
    Object.assign(response, { attestationObject: toText(r.attestationObject), transports: r.getTransports?.() ?? [] });
  }
  return {
    id: c.id,
    rawId: toText(c.rawId) ?? c.id,
    type: 'public-key',
    response: response as Credential['response'],
    clientExtensionResults: c.getClientExtensionResults() as Credential['clientExtensionResults'],
  };
}

export const passkeysSupported = (): boolean => typeof window.PublicKeyCredential === 'function' && !!navigator.credentials;
