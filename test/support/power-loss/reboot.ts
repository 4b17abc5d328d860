/**
 * A checker runs as on the machine after the power came back: a new boot. The fs store reads
 * Linux's boot id to end every lease of an earlier boot (store-fs lease-epoch.ts); a checker
 * process calls {@link simulateReboot} first so that the store sees a boot id the recording never
 * had (the kernel's file cannot be changed, so its opens are pointed at a file holding a new id).
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id";

/** Makes this process read a fresh boot id from {@link BOOT_ID_FILE}. */
export function simulateReboot(): void {
  const fake = path.join(fs.mkdtempSync(path.join(tmpdir(), "keel-boot-")), "boot_id");
  fs.writeFileSync(fake, `${randomUUID()}\n`);
  const open = fs.openSync;
  fs.openSync = ((file: fs.PathLike, flags: fs.OpenMode = "r", mode?: fs.Mode | null) => open(file === BOOT_ID_FILE ? fake : file, flags, mode)) as typeof fs.openSync;
  process.on("exit", () => fs.rmSync(path.dirname(fake), { recursive: true, force: true }));
}
