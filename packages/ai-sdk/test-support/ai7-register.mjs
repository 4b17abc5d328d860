// `node --import=<this file>` (or in NODE_OPTIONS): `ai` and the providers resolve to the ai 7 set
// installed under npm aliases (see ai7-aliases.mjs), for a child process of the ai 7 test run.
import { register } from "node:module";

register("./ai7-aliases.mjs", import.meta.url);
