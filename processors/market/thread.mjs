// A worker thread's entry: Node resolves a worker's first module before the tsx hooks of
// the process apply there, so they are registered here, then the TypeScript body loads.
import { register } from 'tsx/esm/api';

register();
await import('./thread.ts');
