/** Specifier → the npm alias of its ai 7 counterpart (`ai` → `ai-v7`, …). */
export declare const AI7_PACKAGES: Readonly<Record<string, string>>;
/** `ai` → `ai-v7`, `ai/test` → `ai-v7/test`, … ; anything else unchanged. */
export declare function ai7Specifier(specifier: string): string;
/** The Vite form of the same map (`resolve.alias`): one exact pattern per package. */
export declare const ai7ViteAliases: { find: RegExp; replacement: string }[];
/** Node's resolve hook. */
export declare function resolve(specifier: string, context: unknown, nextResolve: (specifier: string, context: unknown) => unknown): Promise<unknown>;
