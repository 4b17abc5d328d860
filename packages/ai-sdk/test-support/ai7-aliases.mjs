// The ai 7 set installed beside ai 6 under npm aliases (packages/ai-sdk's devDependencies), as
// the specifiers a user's program writes: `ai`, `ai/test`, the providers. One map for both
// resolvers: the root vitest.config.ts's `ai-sdk-ai7` project (Vite aliases) and the Node
// resolve hook below, which its child processes (the README example) get through
// `NODE_OPTIONS=--import=<ai7-register.mjs>`. Exact specifiers only: `@ai-sdk/openai` must not catch
// `@ai-sdk/openai-compatible`, nor `ai` catch `ai-v7`.
/** Specifier → the npm alias of its ai 7 counterpart. */
export const AI7_PACKAGES = {
  ai: "ai-v7",
  "@ai-sdk/openai": "@ai-sdk/openai-v4",
  "@ai-sdk/anthropic": "@ai-sdk/anthropic-v4",
  "@ai-sdk/openai-compatible": "@ai-sdk/openai-compatible-v3",
};

/** `ai` → `ai-v7`, `ai/test` → `ai-v7/test`, … ; anything else unchanged. */
export function ai7Specifier(specifier) {
  for (const [name, alias] of Object.entries(AI7_PACKAGES)) {
    if (specifier === name) return alias;
    if (specifier.startsWith(`${name}/`)) return alias + specifier.slice(name.length);
  }
  return specifier;
}

/** The Vite form of the same map (`resolve.alias`): one exact pattern per package. */
export const ai7ViteAliases = Object.entries(AI7_PACKAGES).map(([name, alias]) => ({
  find: new RegExp(`^${name.replace(/[/.]/g, "\\$&")}(?=/|$)`),
  replacement: alias,
}));

/** Node's resolve hook (registered by ai7-register.mjs). */
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(ai7Specifier(specifier), context);
}

