// Types of ops/huge-pages.mjs (plain JavaScript, run by bootstrap before anything is installed).
export declare const HUGE_PAGES_TUNABLE: string;
export declare function withHugePages(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
