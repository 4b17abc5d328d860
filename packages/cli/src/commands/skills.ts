import type { CliCommand } from "../cli-command.js";

/** `keel skills` (being written). */
export const skillsCommand: CliCommand = {
  name: "skills",
  summary: "(not built yet)",
  help: "keel skills",
  options: {},
  allowPositionals: true,
  run: async (_args, io) => {
    io.stderr("keel skills is not built yet\n");
    return 1;
  },
};
