import { KeelError, type Clock, type JsonValue } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import { emptyWorkSessionsDoc, parseWorkSessionsDoc, workSessionKey, type WorkSessionsDoc } from "../work-session-record.js";

/**
 * A change of a mission's work-session document: the next document, `undefined` (nothing to
 * write) or an error (nothing written).
 */
export type WorkSessionsChange = (current: WorkSessionsDoc, now: number) => WorkSessionsDoc | undefined | KeelError;

/** Reads and changes a mission's work-session document in a store. */
export interface WorkSessionsDocs {
  /** The document as stored: `undefined` when there is none, `corrupt` when it is invalid. */
  read(missionId: string): ResultAsync<WorkSessionsDoc | undefined, KeelError>;
  /** A compare-and-swap read-modify-write; answers the document after the change (or as it was). */
  mutate(missionId: string, change: WorkSessionsChange): ResultAsync<WorkSessionsDoc | undefined, KeelError>;
}

/** The work-session documents of `store`; `clock` gives `now` to every change. */
export function workSessionsDocs(store: KeelStore, clock: Clock): WorkSessionsDocs {
  return {
    read: (missionId) =>
      store.docs.get(workSessionKey(missionId)).andThen((doc) => {
        const value = parseWorkSessionsDoc(doc, missionId);
        return value.isOk() ? okAsync(value.value) : errAsync(value.error);
      }),
    mutate: (missionId, change) =>
      updateDoc<JsonValue>(store.docs, workSessionKey(missionId), (doc) => {
        const current = parseWorkSessionsDoc(doc, missionId);
        if (current.isErr()) return errAsync(current.error);
        const next = change(current.value ?? emptyWorkSessionsDoc(missionId), clock.now());
        if (next instanceof KeelError) return errAsync(next);
        return okAsync(next as unknown as JsonValue | undefined);
      }).map((doc) => (doc ? parseWorkSessionsDoc(doc, missionId).unwrapOr(undefined) : undefined)),
  };
}

/**
 * The `no_session` error of a work-session operation, naming the call that restores it. `what`
 * is the operation to try again (`"checkpoint"`, `"close it"`).
 */
export function noWorkSession(missionId: string, role: string | null, what: string): KeelError {
  return new KeelError(
    "no_session",
    `${role === null ? `mission "${missionId}"` : `role "${role}" of mission "${missionId}"`} has no open work session: ` +
      `call keel.openWorkSession({ missionId: "${missionId}", model }) first, then ${what} again`,
    { details: { missionId, role, recovery: "openWorkSession" } },
  );
}
