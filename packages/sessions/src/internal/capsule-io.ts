import { KeelError, totalInputTokens, type JsonValue } from "@keel/core";
import { type Doc, type DocStore, type Fence } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { ResultAsync, err, errAsync, ok, okAsync, type Result } from "neverthrow";
import type { TruncatableField } from "../capsule-bounds.js";
import { CapsuleSchema, type Capsule } from "../capsule-schema.js";
import { applyTurnToCapsule, type TurnRecord } from "../capsule-update.js";
import { capsuleKey, keyText } from "../session-keys.js";
import type { TurnOutcome } from "../turn-types.js";

/** Parses a stored capsule; one of another mission or role, or of a wrong shape, is `corrupt`. */
export function parseCapsule(doc: Doc, missionId: string, role: string): ResultAsync<Capsule, KeelError> {
  const parsed = parseCapsuleValue(doc, missionId, role);
  return parsed.isOk() ? okAsync(parsed.value) : errAsync(parsed.error);
}

/** Synchronous {@link parseCapsule}. */
export function parseCapsuleValue(doc: Doc, missionId: string, role: string): Result<Capsule, KeelError> {
  const parsed = CapsuleSchema.safeParse(doc.value);
  const location = keyText(doc.key);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first && first.path.length > 0 ? ` at ${first.path.map(String).join(".")}` : "";
    return err(
      new KeelError("corrupt", `the capsule at ${location} is not a valid capsule${where}: ${first?.message ?? "invalid"}`, {
        details: { location },
      }),
    );
  }
  if (parsed.data.missionId !== missionId || parsed.data.role !== role) {
    return err(
      new KeelError(
        "corrupt",
        `the capsule at ${location} belongs to mission "${parsed.data.missionId}" role "${parsed.data.role}", not to role "${role}"`,
        { details: { location } },
      ),
    );
  }
  return ok(parsed.data);
}

/** Reads and parses a role's capsule: `undefined` when there is none. */
export function readCapsuleDoc(
  docs: DocStore,
  missionId: string,
  role: string,
): ResultAsync<{ capsule: Capsule; version: number } | undefined, KeelError> {
  return docs
    .get(capsuleKey(missionId, role))
    .andThen((doc) => (doc ? parseCapsule(doc, missionId, role).map((capsule) => ({ capsule, version: doc.version })) : okAsync(undefined)));
}

/** Input tokens a turn observed: the reported input, else a conservative estimate from the prompt bytes. */
export function observedInputTokens(outcome: TurnOutcome): number {
  const reported = totalInputTokens(outcome.usage);
  if (reported !== null) return reported;
  // The same conservative rule as `estimateTokens`: UTF-8 bytes / 3, rounded up.
  return Math.ceil(outcome.promptBytes / 3);
}

/** What {@link writeCapsule} did. */
export interface CapsuleWrite {
  /** The capsule as stored, or `undefined` when nothing was written. */
  capsule: Capsule | undefined;
  /** True when the capsule was deleted during the turn and so was not written again. */
  deletedDuringTurn: boolean;
  truncated: TruncatableField[];
  /** The stored document's version and time, when it was written. */
  stamp?: { version: number; updatedAt: string };
}

/**
 * Applies a turn to the role's capsule by CAS read-modify-write (retried from a fresh read on
 * conflict). A capsule that is no longer valid is replaced; one that existed when the turn began
 * but is gone now was deleted during the turn and is not brought back. `known` is the document
 * as read at the turn's start, with the capsule parsed from it (`null`: not a valid capsule).
 */
export function writeCapsule(
  docs: DocStore,
  record: TurnRecord,
  existedBefore: boolean,
  fence: Fence | undefined,
  known?: { doc: Doc | undefined; capsule?: Capsule | null },
): ResultAsync<CapsuleWrite, KeelError> {
  const state: CapsuleWrite = { capsule: undefined, deletedDuringTurn: false, truncated: [] };
  const update = (current: Doc | undefined): JsonValue | undefined => {
    state.deletedDuringTurn = false;
    if (!current && existedBefore) {
      state.deletedDuringTurn = true;
      return undefined;
    }
    // The document read at the turn's start was parsed then (`known.capsule`); only a newer one is parsed here.
    let base: Capsule | null = null;
    if (current) base = current === known?.doc && known.capsule !== undefined ? known.capsule : parseCapsuleValue(current, record.missionId, record.role).unwrapOr(null);
    const bounded = applyTurnToCapsule(base, record);
    state.truncated = bounded.truncated;
    state.capsule = bounded.capsule;
    return bounded.capsule as unknown as JsonValue;
  };
  const options = { ...(fence ? { fence } : {}), ...(known ? { known: { doc: known.doc } } : {}) };
  // Awaited, not `ResultAsync.map`: this runs on every turn, and each chained step costs a promise and a generator.
  const write = async (): Promise<Result<CapsuleWrite, KeelError>> =>
    (await updateDoc<JsonValue>(docs, capsuleKey(record.missionId, record.role), update, options)).map((doc) => {
      if (state.deletedDuringTurn) return { ...state, capsule: undefined };
      return doc ? { ...state, stamp: { version: doc.version, updatedAt: doc.updatedAt } } : state;
    });
  return new ResultAsync(write());
}

/**
 * Writes a new capsule over one the store cannot read (damaged beyond its backup): an
 * unconditional write, fenced by the role's lease (no other writer of this capsule can be
 * running), after which the next turn resumes from it. A store that keeps damaged bytes (the
 * filesystem store) moves them into its quarantine.
 */
export function replaceCapsule(docs: DocStore, record: TurnRecord, fence: Fence | undefined): ResultAsync<CapsuleWrite, KeelError> {
  const bounded = applyTurnToCapsule(null, record);
  return docs
    .put(capsuleKey(record.missionId, record.role), bounded.capsule as unknown as JsonValue, { unconditional: true, ...(fence ? { fence } : {}) })
    .map((doc) => ({ capsule: bounded.capsule, deletedDuringTurn: false, truncated: bounded.truncated, stamp: { version: doc.version, updatedAt: doc.updatedAt } }));
}
