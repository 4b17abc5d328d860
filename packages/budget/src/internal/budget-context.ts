import type { Clock } from "@keel/core";
import type { DocStore, LogStore } from "@keel/store";
import type { LedgerEvents } from "./ledger-events.js";
import type { ScopeDeclaration } from "./ledger-rules.js";
import type { KnownLedgers } from "./ledger-store.js";

/** What every scope and reservation handle of one budget shares. */
export interface BudgetContext {
  docs: DocStore;
  /** The close log's store: settle appends one record there instead of rewriting the ledger. */
  logs: LogStore | undefined;
  /**
   * Whether closes are appended with `durable: false` (the store offers buffered appends): the
   * ledger document carries the truth, so a close a power loss takes back leaves its
   * reservation open and charged in full. Asked at each close, not when the budget is created
   * (a store may be opened after the parts built over it, as `createKeel` does).
   */
  bufferedCloses: () => boolean;
  /**
   * Whether ledgers are changed by the store's locked update (`docs.update`, capability
   * `lockedUpdates`) instead of a compare-and-swap loop. Asked at each change, as `bufferedCloses` is.
   */
  lockedUpdates: () => boolean;
  clock: Clock;
  events: LedgerEvents;
  /** Key prefix of the ledger documents. */
  prefix: readonly string[];
  /** Default warning thresholds in percent. */
  warnAtPercent: readonly number[];
  /** The ledgers this budget last wrote, used under the store's conditions (see `KnownLedger`). */
  known: KnownLedgers;
}

/** A scope as resolved at creation: its chain (itself first, then ancestors) and its ledger. */
export interface ResolvedScope {
  context: BudgetContext;
  chain: readonly ScopeDeclaration[];
  root: string;
  /** The ledger document's key. */
  key: readonly string[];
}
