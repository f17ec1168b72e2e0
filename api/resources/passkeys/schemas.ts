import { compile } from '../../http/validate.ts';

// A WebAuthn credential as browsers serialise it (PublicKeyCredential.toJSON()); the
// library checks the rest of it.
const credential = {
  type: 'object',
  required: ['id', 'rawId', 'type', 'response'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 1024 },
    rawId: { type: 'string', minLength: 1, maxLength: 1024 },
    type: { type: 'string', enum: ['public-key'] },
    response: { type: 'object' },
    clientExtensionResults: { type: 'object', default: {} },
  },
} as const;
const ceremonyId = { type: 'string', minLength: 1, maxLength: 100 } as const;

export interface PasskeyOptionsBody {
  password: string;
  code?: string;
}

export const passkeyOptionsBody = compile<PasskeyOptionsBody>({
  type: 'object',
  required: ['password'],
  properties: {
    password: { type: 'string', minLength: 1, maxLength: 1024 },
    code: { type: 'string', maxLength: 32 },
  },
});

export interface PasskeyRegisterBody {
  ceremony_id: string;
  credential: Record<string, unknown>;
  name?: string;
}

export const passkeyRegisterBody = compile<PasskeyRegisterBody>({
  type: 'object',
  required: ['ceremony_id', 'credential'],
  properties: { ceremony_id: ceremonyId, credential, name: { type: 'string', minLength: 1, maxLength: 100 } },
});

export interface PasskeyLoginOptionsBody {
  email?: string;
}

export const passkeyLoginOptionsBody = compile<PasskeyLoginOptionsBody>({
  type: 'object',
  properties: { email: { type: 'string', maxLength: 254 } },
});

export interface PasskeyLoginBody {
  ceremony_id: string;
  credential: Record<string, unknown>;
  remember_me?: boolean;
}

export const passkeyLoginBody = compile<PasskeyLoginBody>({
  type: 'object',
  required: ['ceremony_id', 'credential'],
  properties: { ceremony_id: ceremonyId, credential, remember_me: { type: 'boolean', default: false } },
});
