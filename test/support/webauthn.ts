// A software WebAuthn authenticator for tests: what a browser and a platform authenticator
// would hand the server, built with node's crypto. It makes a real ES256 (P-256) key pair,
// answers registration with a "none" attestation (CBOR attestation object with authData
// and the COSE public key) and sign-in with an assertion signed over
// authData || SHA-256(clientDataJSON). The few CBOR structures are encoded by hand here,
// independently of the library under test.
import crypto from 'node:crypto';

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor> | { [key: string]: Cbor };

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

/** Minimal CBOR (RFC 8949): unsigned and negative integers, byte and text strings, maps. */
export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error('only integers');
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => crypto.createHash('sha256').update(b).digest();

// Authenticator data flags (WebAuthn 6.1).
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export interface AuthenticatorOptions {
  rpId: string;
  origin: string;
}

export class SoftwareAuthenticator {
  readonly credentialId = crypto.randomBytes(16);
  /** The signature counter of the last assertion; the next one reports it plus one. */
  counter = 0;
  /** The user handle the RP gave at registration, returned with assertions. */
  userHandle: string | undefined;
  private readonly keys = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });

  constructor(private readonly opts: AuthenticatorOptions) {}

  get id(): string {
    return b64url(this.credentialId);
  }

  /** The COSE_Key of the public key: EC2, ES256, P-256, x, y. */
  coseKey(): Buffer {
    const jwk = this.keys.publicKey.export({ format: 'jwk' });
    return cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
  }

  /** navigator.credentials.create() for registration options `publicKey`, as JSON. */
  register(publicKey: { challenge: string; user: { id: string } }, over: { origin?: string; rpId?: string; flags?: number } = {}) {
    this.userHandle = publicKey.user.id;
    const clientDataJSON = JSON.stringify({ type: 'webauthn.create', challenge: publicKey.challenge, origin: over.origin ?? this.opts.origin, crossOrigin: false });
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    const authData = Buffer.concat([
      sha256(over.rpId ?? this.opts.rpId),
      Buffer.from([over.flags ?? UP | UV | AT]),
      counter,
      Buffer.alloc(16), // AAGUID: none
      idLength,
      this.credentialId,
      this.coseKey(),
    ]);
    const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData });
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(Buffer.from(clientDataJSON)), attestationObject: b64url(attestationObject), transports: ['internal'] },
    };
  }

  /** navigator.credentials.get() for sign-in options `publicKey`, as JSON; `counter` sets the counter reported. */
  assert(publicKey: { challenge: string }, over: { counter?: number; origin?: string } = {}) {
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: publicKey.challenge, origin: over.origin ?? this.opts.origin, crossOrigin: false }));
    this.counter = over.counter ?? this.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    const authData = Buffer.concat([sha256(this.opts.rpId), Buffer.from([UP | UV]), counter]);
    const signature = crypto.sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.keys.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
    };
  }
}
