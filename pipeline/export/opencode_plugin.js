// The plugin `pipeline export opencode` writes (.opencode/plugin/context-pipeline.js), and
// `pipeline export kilo` too (.kilo/plugin/context-pipeline.js: Kilo CLI is a fork of opencode).
// It does what their static files cannot, from the compiled JSON beside the export
// (../context-pipeline/plugin.json, written by pipeline/export/opencode.py):
// * experimental.chat.system.transform: the profile's sections are opencode's agent prompt
//   (agent.build.prompt names context-pipeline/prompt.md); a section holding the working
//   directory is written there with a marker, which this hook replaces with the session's
//   directory;
// * experimental.session.compacting: the profile's summary instructions (schema rendered)
//   replace the agent's compaction prompt.
// Generated file: edit the profile and export again, not this file.
import { readFileSync } from "node:fs";

const data = JSON.parse(readFileSync(new URL("../context-pipeline/plugin.json", import.meta.url), "utf8"));

export const ContextPipeline = async ({ directory }) => ({
  "experimental.chat.system.transform": async (_input, output) => {
    if (!data.cwd_marker) return;
    output.system.forEach((part, i) => {
      output.system[i] = part.split(data.cwd_marker).join(directory);
    });
  },
  "experimental.session.compacting": async (_input, output) => {
    if (typeof data.compaction_prompt === "string") output.prompt = data.compaction_prompt;
  },
});
