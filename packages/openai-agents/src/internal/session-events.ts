/**
 * The session as a log of events, and the pure fold that gives its items. `add` carries items;
 * `pop` names the one item it removed (by the seq of its `add` and its position there), so a pop
 * appended with `expectedSeq` removes exactly the item that was last when it was decided (a clear
 * deletes the log). Order is the store's `seq`, never a clock.
 */
import { KeelError, type JsonValue } from "@keel/core";
import type { LogRecord } from "@keel/store";
import { z } from "zod";

/** One session item as stored: a JSON object (the store keeps only JSON). */
export const ItemSchema = z.custom<JsonValue>((value) => typeof value === "object" && value !== null && !Array.isArray(value), "an item is a JSON object");

/** zod schema of one session event. */
export const SessionEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("add"), items: z.array(ItemSchema) }),
  z.object({ type: z.literal("pop"), seq: z.number().int().positive(), index: z.number().int().nonnegative() }),
]);
/** One session event, as stored. */
export type SessionEvent = z.infer<typeof SessionEventSchema>;

/** A live item and where it was added. */
export interface LiveItem {
  seq: number;
  index: number;
  item: JsonValue;
}

/** Folds the log into the live items, oldest first. Throws `corrupt` on a record that is not an event. */
export function foldSessionEvents(records: readonly LogRecord[], location: string): LiveItem[] {
  let items: LiveItem[] = [];
  for (const record of records) {
    const parsed = SessionEventSchema.safeParse(record.value);
    if (!parsed.success) {
      throw new KeelError("corrupt", `session log ${location} record ${record.seq} is not a session event: ${parsed.error.issues[0]?.message ?? "unknown"}`, {
        details: { location, seq: record.seq },
      });
    }
    const event = parsed.data;
    if (event.type === "add") event.items.forEach((item, index) => items.push({ seq: record.seq, index, item }));
    else items = items.filter((live) => !(live.seq === event.seq && live.index === event.index));
  }
  return items;
}
