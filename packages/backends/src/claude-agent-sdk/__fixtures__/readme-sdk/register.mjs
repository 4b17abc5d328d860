// `node --import <this file>`: the README's Claude examples, run where the Claude Agent SDK is not
// installed (this workspace), import `@anthropic-ai/claude-agent-sdk` from the stand-in beside
// this file. Used by claude-agent-sdk.readme.test.ts and test/claude-agent-sdk-session-store.test.ts.
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
