import type { IntegrityProblem, IntegrityReport } from "./ports.js";
import { decodeKeyText } from "./key-text.js";
import type { StoredPlace } from "./row-store.js";
import { keyPath } from "./validation.js";

/*
 * The findings of a row store's integrity check (a value that is not JSON, a log whose seqs are
 * not dense, another schema version), worded once so that SQLite and PostgreSQL report alike.
 */

/** A log's seqs as the integrity check reads them from its rows. */
export interface LogSeqs {
  /** The log's key text. */
  key: string;
  /** The head's last seq. */
  lastSeq: number;
  /** How many records the log holds. */
  count: number;
  /** The lowest seq among them (null when none). */
  low: number | null;
  /** The highest seq among them (null when none). */
  high: number | null;
}

/** The problems an integrity check finds in stored rows, each worded as in every row store (see {@link createIntegrityFindings}). */
export interface IntegrityFindings {
  /** Records a problem found by the adapter's own means (a damaged page). */
  add(problem: IntegrityProblem): void;
  /** A schema version other than the adapter's is a `schema` problem. */
  schema(found: number, expected: number): void;
  /** A live document whose value is not JSON is `corrupt`. */
  doc(key: string, value: string | null): void;
  /** A log record whose value is not JSON is `corrupt`. */
  record(log: string, seq: number | string, value: string | null): void;
  /** A log whose seqs are not dense up to its head is a `seq_gap`. */
  logSeqs(seqs: LogSeqs): void;
  /** The report of what was found; nothing is repaired in place. */
  report(): IntegrityReport;
}

const parses = (text: string | null) => {
  try {
    JSON.parse(text ?? "");
    return true;
  } catch {
    return false;
  }
};

/** Collects an integrity check's findings in the order they are found, at locations under `place`. */
export function createIntegrityFindings(place: StoredPlace): IntegrityFindings {
  const problems: IntegrityProblem[] = [];
  const at = place.location;
  return {
    add: (problem) => problems.push(problem),
    schema: (found, expected) => {
      if (found !== expected) problems.push({ location: at, code: "schema", message: `schema version ${found}; this adapter writes ${expected}` });
    },
    doc: (key, value) => {
      if (!parses(value)) problems.push({ location: `${at}#docs/${keyPath(decodeKeyText(key))}`, code: "corrupt", message: "the stored value is not JSON" });
    },
    record: (log, seq, value) => {
      if (!parses(value)) problems.push({ location: `${at}#logs/${keyPath(decodeKeyText(log))}@${seq}`, code: "corrupt", message: "the stored record is not JSON" });
    },
    logSeqs: ({ key, lastSeq, count, low, high }) => {
      if (count > 0 && (high !== lastSeq || high! - low! + 1 !== count)) {
        problems.push({ location: `${at}#logs/${keyPath(decodeKeyText(key))}`, code: "seq_gap", message: `${count} records between seq ${low} and ${high}, head ${lastSeq}` });
      }
    },
    report: () => ({ ok: problems.length === 0, repaired: [], problems }),
  };
}

