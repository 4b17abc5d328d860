/**
 * What a hostile or careless caller can hand `@keel/backends/claude-agent-sdk`'s exports: values
 * whose very reading is hostile (a proxy whose reads throw, an array proxy whose items throw, a
 * throwing getter, cycles, a huge array, a revoked proxy) in every argument. Each export answers
 * with its documented contract: the constructors and the plain-value helpers
 * (`createClaudeAgentSdkBackend`, `createClaudeSessionStore`, `claudeAgentSdkCapabilities`,
 * `claudeAgentSdkTurnCost`) throw `invalid_input`, `decideClaudeAgentSdkOutcome` and `runTurn`
 * answer it as a `Result`, and the session store (the SDK's Promise interface) rejects with it,
 * writing nothing.
 */
import { emptyUsage } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { describe, expect, it } from "vitest";
import { expectRefused, expectRejectedKeel, expectThrowsKeel, hostileStructures, settle, storeSnapshot } from "../../../../test/support/hostile.js";
import { claudeAgentSdkCapabilities, claudeAgentSdkTurnCost, createClaudeAgentSdkBackend, createClaudeSessionStore, decideClaudeAgentSdkOutcome } from "./index.js";

const findings = {
  threadId: "t1",
  text: "done",
  usage: emptyUsage(),
  fileAccess: [],
  toolCalls: 0,
  resumeState: null,
  terminal: true,
  inBandError: null,
  events: 2,
  strayLines: 0,
  strayText: "",
  corruptReason: null,
};
const run = { findings, result: { type: "result", subtype: "success", is_error: false }, thrown: undefined, stop: null, resumeThreadId: null, stderr: "", timeoutMs: 1000 };

/** Labels of the values that are readable objects, where any object is taken (an SDK message is read loosely). */
const RECORDS = new Set(["a cyclic object"]);
/** The revoked proxy is left out where a primitive is expected (see hostileStructures). */
const REVOKED = "a revoked proxy";

function named(name: string, label: string, failure: unknown): Error {
  return new Error(`${name} with ${label}: ${failure instanceof Error ? failure.message : String(failure)}`);
}

describe("@keel/backends/claude-agent-sdk given values whose reading is hostile", () => {
  it("the constructors and helpers throw invalid_input, never a TypeError", () => {
    expect(decideClaudeAgentSdkOutcome(run as never).isOk()).toBe(true);
    expect(claudeAgentSdkTurnCost({ total_cost_usd: 1 }, false, null)).toBe(1);
    const thrown: [string, (value: unknown) => unknown, Set<string>?][] = [
      ["createClaudeAgentSdkBackend(value)", (value) => createClaudeAgentSdkBackend(value as never)],
      ["createClaudeAgentSdkBackend({ env: value })", (value) => createClaudeAgentSdkBackend({ env: value as never })],
      ["createClaudeAgentSdkBackend({ sessionStore: value })", (value) => createClaudeAgentSdkBackend({ sessionStore: value as never })],
      ["createClaudeSessionStore(value)", (value) => createClaudeSessionStore(value as never)],
      ["createClaudeSessionStore({ store: value })", (value) => createClaudeSessionStore({ store: value as never })],
      ["claudeAgentSdkCapabilities(value)", (value) => claudeAgentSdkCapabilities(value as never), new Set(["a cyclic object"])],
      ["claudeAgentSdkCapabilities({ settingSources: value })", (value) => claudeAgentSdkCapabilities({ settingSources: value as never })],
      ["claudeAgentSdkTurnCost(value, false, null)", (value) => claudeAgentSdkTurnCost(value as never, false, null), RECORDS],
      ["claudeAgentSdkTurnCost(result, value, null)", (value) => claudeAgentSdkTurnCost({}, value as never, null)],
      ["claudeAgentSdkTurnCost(result, false, value)", (value) => claudeAgentSdkTurnCost({}, false, value as never), RECORDS],
    ];
    for (const [label, value] of hostileStructures()) {
      for (const [name, call, takes] of thrown) {
        if (takes?.has(label)) {
          expect(() => call(value), `${name} with ${label}`).not.toThrow();
          continue;
        }
        if (label === REVOKED && name.includes("result, value")) continue;
        try {
          expectThrowsKeel(() => call(value));
        } catch (failure) {
          throw named(name, label, failure);
        }
      }
    }
  });

  it("decideClaudeAgentSdkOutcome and runTurn answer invalid_input, and the query is never called", async () => {
    let queried = 0;
    const backend = createClaudeAgentSdkBackend({
      query: (() => {
        queried++;
        throw new Error("not called");
      }) as never,
    });
    const request = { prompt: "p", cwd: "/tmp", timeoutMs: 1000 };
    const refused: [string, (value: unknown) => unknown, Set<string>?][] = [
      ["decideClaudeAgentSdkOutcome(value)", (value) => decideClaudeAgentSdkOutcome(value as never)],
      ["decideClaudeAgentSdkOutcome({ findings: value })", (value) => decideClaudeAgentSdkOutcome({ ...run, findings: value } as never)],
      ["decideClaudeAgentSdkOutcome({ result: value })", (value) => decideClaudeAgentSdkOutcome({ ...run, result: value } as never), RECORDS],
      ["backend.runTurn(value)", (value) => backend.runTurn(value as never)],
      ["backend.runTurn(request, value)", (value) => backend.runTurn(request, value as never)],
    ];
    for (const [label, value] of hostileStructures()) {
      for (const [name, call, takes] of refused) {
        const outcome = takes?.has(label) ? settle(() => call(value)) : expectRefused(() => call(value));
        await outcome.catch((failure: unknown) => {
          throw named(name, label, failure);
        });
      }
    }
    expect(queried).toBe(0);
  });

  it("the session store rejects a key, entries or a project key of the wrong shape with invalid_input, writing nothing", async () => {
    const store = createMemoryStore();
    const sessions = createClaudeSessionStore({ store });
    const key = { projectKey: "/work/p", sessionId: "s1" };
    await sessions.append(key, [{ type: "user", uuid: "u1" }]);
    const before = await storeSnapshot(store);
    const rejected: [string, (value: unknown) => Promise<unknown>][] = [
      ["append(value, entries)", (value) => sessions.append(value as never, [{ type: "user", uuid: "u2" }])],
      ["append(key, value)", (value) => sessions.append(key, value as never)],
      ["append(key, [value])", (value) => sessions.append(key, [value] as never)],
      ["load(value)", (value) => sessions.load(value as never)],
      ["delete(value)", (value) => sessions.delete(value as never)],
      ["listSubkeys(value)", (value) => sessions.listSubkeys(value as never)],
      ["listSessions(value)", (value) => sessions.listSessions(value as never)],
    ];
    for (const [label, value] of hostileStructures()) {
      for (const [name, call] of rejected) {
        // A project key is a string: the revoked proxy is left out there (see hostileStructures).
        if (label === REVOKED && name.startsWith("listSessions")) continue;
        await expectRejectedKeel(() => call(value)).catch((failure: unknown) => {
          throw named(name, label, failure);
        });
      }
    }
    expect(await storeSnapshot(store)).toBe(before);
    expect(await sessions.load(key)).toEqual([{ type: "user", uuid: "u1" }]);
  });
});
