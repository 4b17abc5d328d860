import { type Clock, type EventBus, KeelError, isSafeName } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { err, ResultAsync } from "neverthrow";
import { type ImportPiSessionOptions, importPiSession, type PiImportDiagnostic } from "./pi-session-import.js";
import { openTranscript, type Transcript, writeInto } from "./transcript-open.js";

/** Options of {@link importPiSessionToStore}. */
export interface ImportPiSessionToStoreOptions extends ImportPiSessionOptions {
  store: KeelStore;
  /** The text of the pi session file. */
  text: string;
  /** The new session's id (default the file's session id, which must then be a safe name). */
  sessionId?: string;
  clock?: Clock;
  events?: EventBus;
}

/**
 * Reads a pi session file ({@link importPiSession}) and writes it into a new transcript of the
 * store: every entry in one atomic append, keeping pi's ids, then the leaf pi would resume at.
 * `conflict` when the session already has entries.
 */
export function importPiSessionToStore(options: ImportPiSessionToStoreOptions): ResultAsync<{ transcript: Transcript; diagnostics: PiImportDiagnostic[] }, KeelError> {
  const imported = importPiSession(options.text, options.strict === undefined ? {} : { strict: options.strict });
  if (imported.isErr()) return new ResultAsync(Promise.resolve(err(imported.error)));
  const session = imported.value;
  const sessionId = options.sessionId ?? session.sessionId;
  if (!isSafeName(sessionId)) {
    return new ResultAsync(Promise.resolve(err(new KeelError("invalid_input", `session id "${sessionId}" is not a safe name: pass sessionId`, { details: { sessionId } }))));
  }
  return openTranscript({
    store: options.store,
    sessionId,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.events ? { events: options.events } : {}),
  }).andThen((transcript) => {
    if (transcript.tree().size > 0) {
      return err(new KeelError("conflict", `session "${sessionId}" already has entries: import into a new session id`, { details: { sessionId } }));
    }
    const leaf = session.leafId();
    return writeInto(transcript, session.entries)
      .andThen(() => (leaf !== null && transcript.leafId() !== leaf ? transcript.setLeaf(leaf) : ResultAsync.fromSafePromise(Promise.resolve(undefined))))
      .map(() => ({ transcript, diagnostics: session.diagnostics }));
  });
}
