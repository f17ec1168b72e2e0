// Mocha global fixtures: the real stack comes up once before all tests and goes at the end.
import { startTestStack, stopTestStack } from './stack.ts';

export async function mochaGlobalSetup(): Promise<void> {
  await startTestStack();
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestStack();
}
