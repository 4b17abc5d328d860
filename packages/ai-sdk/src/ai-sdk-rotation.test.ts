import { createOpenAI } from "@ai-sdk/openai";
import { createFsStore } from "@keel/store-fs";
import { createKeel } from "@keel/runtime";
import { useTempDirs } from "@keel/testkit";
import { startFakeProvider } from "@keel/testkit/provider";
import { expect, it } from "vitest";
import { createAiSdkBackend } from "./ai-sdk-backend.js";

const dirs = useTempDirs("keel-ai-sdk-rotation-");

// The runtime's rolling policy over the AI SDK backend: resumed turns carry the thread, and a
// rotation starts a new transcript seeded from the capsule only (nothing of the old thread).
it("rotates a rolling role session to a new thread seeded from the capsule", async () => {
  const provider = (
    await startFakeProvider({
      replies: [
        { text: "Parsed the flags.\nDecision: flags parsed with a table\nInspected: src/flags.ts\nOpen: add tests" },
        { text: "Wired the help text.\nDecision: help text wired\nInspected: src/help.ts" },
        { text: "Started the tests.\nDecision: tests started" },
      ],
    })
  )._unsafeUnwrap();
  try {
    const threads = dirs.track(createFsStore({ dir: dirs.dir() }));
    const backend = createAiSdkBackend({ model: createOpenAI({ baseURL: provider.openAiUrl, apiKey: "test" }).chat("fake-model"), store: threads, maxRetries: 0 });
    const keel = createKeel({ dir: dirs.dir(), cwd: dirs.dir(), backends: [backend], policy: "rolling", limits: { maxTurns: 2 }, instructions: false });
    try {
      const turn = async (prompt: string) => {
        const result = await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt, objective: "Ship --json" });
        if (result.isErr()) throw new Error(`${result.error.code}: ${result.error.message}`);
        return result.value;
      };
      const first = await turn("Parse the flags.");
      const second = await turn("Wire the help text.");
      const third = await turn("Write the tests.");
      expect([first.plan.action, second.plan.action, third.plan.action]).toEqual(["fresh", "resumed", "rotated"]);
      expect(second.threadId).toBe(first.threadId);
      expect(third.threadId).not.toBe(first.threadId);

      expect(provider.failures).toEqual([]);
      const [, resumed, rotated] = provider.modelRequests();
      expect(resumed!.text).toContain("Parse the flags.");
      expect(rotated!.text).not.toContain("Parse the flags.");
      expect(rotated!.text).not.toContain("Wired the help text.");
      expect(rotated!.text).toContain("help text wired"); // the capsule's decisive output
      expect(rotated!.text).toContain("Write the tests.");
    } finally {
      await keel.close();
    }
  } finally {
    await provider.close();
  }
});
