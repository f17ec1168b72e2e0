// The helper thread's entry (see thread.mjs): the tsx hooks first, then the TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./prepare-thread.ts');
