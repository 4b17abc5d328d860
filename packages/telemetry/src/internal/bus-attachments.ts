import type { EventBus, KeelEvent, Unsubscribe } from "@keel/core";

/** The buses a sink listens to, so that `close()` can detach from all of them. */
export interface BusAttachments {
  /** Listens to every event of `bus`; the returned function detaches (twice is harmless). */
  attach(bus: EventBus, listener: (event: KeelEvent) => void): Unsubscribe;
  /** Detaches from every bus. */
  detachAll(): void;
}

/** Creates a {@link BusAttachments}. */
export function createBusAttachments(): BusAttachments {
  const detachers = new Set<Unsubscribe>();
  return {
    attach(bus, listener) {
      const off = bus.on("*", listener);
      const detach = () => {
        detachers.delete(detach);
        off();
      };
      detachers.add(detach);
      return detach;
    },
    detachAll() {
      for (const detach of [...detachers]) detach();
    },
  };
}
