// Module resolve hook for the CLI conventions tests: a "broken package" fails to resolve, as a
// package with a missing or damaged install (or an optional peer left out) does; every module that does resolve is listed in
// the log file, so a test can see which modules a command loaded.
import { appendFileSync } from "node:fs";

let broken = [];
let log = null;

export async function initialize(data) {
  broken = data.broken;
  log = data.log;
}

function isBroken(specifier) {
  return broken.some((name) => (name.endsWith("/*") ? specifier.startsWith(name.slice(0, -1)) : specifier === name || specifier.startsWith(`${name}/`)));
}

export async function resolve(specifier, context, next) {
  // Node's own error for a package that is not installed: its code, and the name in quotes.
  if (isBroken(specifier)) throw Object.assign(new Error(`Cannot find package '${specifier}' (broken on purpose by the test)`), { code: "ERR_MODULE_NOT_FOUND" });
  const resolved = await next(specifier, context);
  if (log) appendFileSync(log, `${resolved.url}\n`);
  return resolved;
}
