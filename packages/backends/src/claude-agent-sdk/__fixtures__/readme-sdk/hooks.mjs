// Module resolution hook (see register.mjs): only the SDK's name is redirected.
const STAND_IN = new URL("./claude-agent-sdk.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === "@anthropic-ai/claude-agent-sdk") return { url: STAND_IN, shortCircuit: true };
  return next(specifier, context);
}
