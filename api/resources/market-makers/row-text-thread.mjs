// The helper thread's entry (see row-text-threads.ts): the tsx hooks first, then the TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./row-text-thread.ts');
