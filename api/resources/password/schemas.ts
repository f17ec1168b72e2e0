import { compile } from '../../http/validate.ts';

export interface PasswordChangeBody {
  old_password: string;
  new_password: string;
}

export const passwordChangeBody = compile<PasswordChangeBody>({
  type: 'object',
  required: ['old_password', 'new_password'],
  properties: {
    old_password: { type: 'string', minLength: 1, maxLength: 1024 },
    new_password: { type: 'string', minLength: 1, maxLength: 1024 },
  },
});
