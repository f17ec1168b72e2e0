// The zstd helper thread's entry (see zstd.ts): the tsx hooks first, then the TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./zstd-thread.ts');
