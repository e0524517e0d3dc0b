// Normalise tool snippets exactly as pi 0.84.0's AgentSession does before it builds the
// system prompt (AgentSession.prototype._normalizePromptSnippet). Used only by
// gen_system_prompt_vectors.py, through the oracle's bundled Node:
//   /tmp/oracle/oracle --run tests/data/pi_snippets.mjs /tmp/oracle < snippets.json
// stdin: a JSON list of strings; stdout: a JSON list of strings or nulls.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const oracleDir = process.argv[2];
const url = pathToFileURL(join(oracleDir, "node_modules/@earendil-works/pi-coding-agent/dist/core/agent-session.js"));
const { AgentSession } = await import(url.href);
const normalize = AgentSession.prototype._normalizePromptSnippet;
let text = "";
process.stdin.setEncoding("utf-8");
for await (const chunk of process.stdin) text += chunk;
const inputs = JSON.parse(text);
process.stdout.write(JSON.stringify(inputs.map((s) => normalize.call(null, s) ?? null)));
