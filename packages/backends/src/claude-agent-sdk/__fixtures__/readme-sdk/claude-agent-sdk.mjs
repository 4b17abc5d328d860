// A stand-in for `@anthropic-ai/claude-agent-sdk` (see register.mjs): its `query` replays what the
// real SDK (0.3.336) yielded for the README's prompts against the fake provider, recorded in
// ../claude-agent-sdk.readme-*.jsonl, with the partial messages (`stream_event`) only when asked
// for, as the SDK does. A resume with a `sessionStore` first loads the session from it, as the
// SDK does on a host without the local copy: a session the store does not hold is not found.
import { readFileSync } from "node:fs";

const RECORDINGS = {
  "Summarize README.md": "readme-first",
  "Now list the open TODOs": "readme-next",
  "Go on": "readme-store",
};

function recorded(name) {
  return readFileSync(new URL(`../claude-agent-sdk.${name}.jsonl`, import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

export function query({ prompt, options }) {
  const name = RECORDINGS[prompt];
  if (name === undefined) throw new Error(`the stand-in SDK has no recording for the prompt ${JSON.stringify(prompt)}`);
  return (async function* () {
    if (options.resume !== undefined && options.sessionStore !== undefined) {
      const entries = await options.sessionStore.load({ projectKey: options.cwd.replace(/[^A-Za-z0-9]/g, "-"), sessionId: options.resume });
      if (entries === null) {
        yield* recorded("resume-not-found");
        throw new Error(`Claude Code returned an error result: No conversation found with session ID: ${options.resume}`);
      }
    }
    for (const message of recorded(name)) if (options.includePartialMessages === true || message.type !== "stream_event") yield message;
  })();
}
