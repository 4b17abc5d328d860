import { KeelError, utf8Bytes } from "@keel/core";
import type { Capsule, Execute, TurnPlan } from "@keel/sessions";
import { err, ok, okAsync, type Result } from "neverthrow";

/**
 * A small deterministic stand-in for a model provider with threads, for tests (not a backend
 * adapter). A thread remembers every prompt and reply; a resumed call sends only the new prompt,
 * yet its observed input tokens cover the whole thread, as a real provider bills them.
 */
export interface ScriptedProvider {
  /** Runs one call: on `threadId` (resumed) or on a new thread (`null`). */
  call(threadId: string | null, prompt: string, respond: (context: string) => string): Result<ProviderReply, KeelError>;
  /** Forgets a thread, as a provider does when its session files are gone. */
  forget(threadId: string): void;
  /** The provider's state as JSON (a provider keeps threads across host restarts). */
  save(): string;
}

/** What one provider call returns. */
export interface ProviderReply {
  threadId: string;
  text: string;
  /** Input tokens of the call: the whole thread plus the new prompt, at 4 bytes a token. */
  inputTokens: number;
  promptBytes: number;
}

/** Creates a {@link ScriptedProvider}, optionally from a saved state. */
export function createScriptedProvider(options: { resumable: boolean; saved?: string }): ScriptedProvider {
  const state = options.saved ? (JSON.parse(options.saved) as { next: number; threads: Record<string, string> }) : { next: 0, threads: {} };
  return {
    call(threadId, prompt, respond) {
      if (threadId !== null && !options.resumable) return err(new KeelError("unsupported", "this provider cannot resume threads"));
      if (threadId !== null && state.threads[threadId] === undefined) {
        return err(new KeelError("resume_failed", `no conversation found with session ID ${threadId}`));
      }
      const id = threadId ?? `thread-${++state.next}`;
      const history = state.threads[id] ?? "";
      const context = `${history}${prompt}\n`;
      const text = respond(context);
      state.threads[id] = `${context}${text}\n`;
      return ok({ threadId: id, text, inputTokens: Math.ceil(utf8Bytes(context) / 4), promptBytes: utf8Bytes(prompt) });
    },
    forget(threadId) {
      delete state.threads[threadId];
    },
    save: () => JSON.stringify(state),
  };
}

/** One role's task in a round: everything so far (what a host without a session must resend) and the new part. */
export interface RoleTask {
  full: string;
  delta: string;
  respond: (context: string) => string;
  /** Paths the role touches in this turn. */
  paths?: string[];
}

/** The seed a host renders from a capsule for a fresh provider session. */
export function renderSeed(capsule: Capsule): string {
  return [
    `You are continuing as ${capsule.role}. Your latest decisive output was:`,
    capsule.decisiveOutput ?? "(none)",
    `Open items: ${capsule.openCheckpointItems.join("; ") || "(none)"}`,
    `Paths you referenced: ${capsule.referencedPaths.join(", ") || "(none)"}`,
  ].join("\n");
}

/** The prompt a host sends for a plan: only the new part when resuming, else a seeded or full prompt. */
export function promptFor(plan: TurnPlan, task: RoleTask): string {
  if (plan.action === "resumed") return task.delta;
  if (plan.capsule) return `${renderSeed(plan.capsule)}\n${task.delta}`;
  return task.full;
}

/** A host's execute function over the scripted provider. */
export function scriptedExecute(provider: ScriptedProvider, task: RoleTask): Execute {
  return (plan) => {
    const reply = provider.call(plan.threadId, promptFor(plan, task), task.respond);
    if (reply.isErr()) return Promise.resolve(err(reply.error));
    const { threadId, text, inputTokens, promptBytes } = reply.value;
    return okAsync({
      text,
      threadId,
      usage: { inputUncached: inputTokens, cacheRead: 0, cacheWrite: 0, output: Math.ceil(utf8Bytes(text) / 4), reasoning: null, costUsd: null },
      promptBytes,
      decisiveOutput: text,
      paths: { referenced: task.paths ?? [], inspected: task.paths ?? [] },
      openCheckpointItems: [`${plan.role}: follow up on turn ${plan.turn}`],
    });
  };
}
