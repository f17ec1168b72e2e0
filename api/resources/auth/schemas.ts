import { compile } from '../../http/validate.ts';

export interface LoginBody {
  email?: string;
  password?: string;
  remember_me?: boolean;
}

// Presence is checked by the handler: a missing email or password is a login failure
// reported under non_field_errors (specification 4.2), not a field error.
export const loginBody = compile<LoginBody>({
  type: 'object',
  properties: {
    email: { type: 'string', maxLength: 254 },
    password: { type: 'string', maxLength: 1024 },
    remember_me: { type: 'boolean', default: false },
  },
});
