import { isJsonValue, type JsonObject, type KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { okAsync, type ResultAsync } from "neverthrow";

/**
 * Where the runtime keeps a role's backend thread state: the opaque `resumeState` an adapter
 * returned with the thread's last turn (e.g. Codex's running usage total), to be passed back when
 * the thread is resumed. One document per mission and role, next to the role's capsule.
 */
export function backendThreadKey(missionId: string, role: string): string[] {
  return ["missions", missionId, "backend-threads", role];
}

/** The stored document. */
interface BackendThreadState {
  backend: string;
  threadId: string;
  resumeState: JsonObject;
}

function isState(value: unknown): value is BackendThreadState {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record.backend === "string" &&
    typeof record.threadId === "string" &&
    typeof record.resumeState === "object" &&
    record.resumeState !== null &&
    !Array.isArray(record.resumeState) &&
    isJsonValue(record.resumeState)
  );
}

/**
 * The `resumeState` kept for `threadId` of `backend`, or `undefined` when none is kept, it was
 * kept for another thread or backend, or it cannot be read (a resumed turn then runs without it:
 * the adapter reports the buckets it cannot compute as `null`).
 */
export function readResumeState(
  store: KeelStore,
  missionId: string,
  role: string,
  backend: string,
  threadId: string,
): ResultAsync<JsonObject | undefined, KeelError> {
  return store.docs.get(backendThreadKey(missionId, role)).map((doc) => {
    const value = doc?.value;
    return isState(value) && value.backend === backend && value.threadId === threadId ? value.resumeState : undefined;
  });
}

/**
 * Keeps the `resumeState` a turn returned (a blind write: turns of one role are serialized by
 * its session lease, and only the last turn's state matters). A turn without one writes nothing.
 */
export function writeResumeState(
  store: KeelStore,
  missionId: string,
  role: string,
  backend: string,
  threadId: string | null,
  resumeState: JsonObject | undefined,
): ResultAsync<void, KeelError> {
  if (resumeState === undefined || threadId === null) return okAsync(undefined);
  const value: BackendThreadState = { backend, threadId, resumeState };
  return store.docs.put(backendThreadKey(missionId, role), value as unknown as JsonObject, { unconditional: true }).map(() => undefined);
}
