import { compile } from '../../http/validate.ts';

// Codes are at most 32 characters everywhere (specification 8); a TOTP code is 6 digits,
// anything else is simply a wrong code.
const code = { type: 'string', minLength: 1, maxLength: 32 } as const;
const password = { type: 'string', minLength: 1, maxLength: 1024 } as const;

export interface TotpLoginBody {
  challenge_id: string;
  code: string;
}

export const totpLoginBody = compile<TotpLoginBody>({
  type: 'object',
  required: ['challenge_id', 'code'],
  properties: { challenge_id: { type: 'string', minLength: 1, maxLength: 100 }, code },
});

export interface TotpSetupBody {
  password: string;
}

export const totpSetupBody = compile<TotpSetupBody>({
  type: 'object',
  required: ['password'],
  properties: { password },
});

export interface TotpConfirmBody {
  code: string;
}

export const totpConfirmBody = compile<TotpConfirmBody>({
  type: 'object',
  required: ['code'],
  properties: { code },
});

export interface TotpDisableBody {
  password: string;
  code: string;
}

export const totpDisableBody = compile<TotpDisableBody>({
  type: 'object',
  required: ['password', 'code'],
  properties: { password, code },
});
