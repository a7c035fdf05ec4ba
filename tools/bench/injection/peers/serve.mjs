// Judge texts with one npm prompt-injection guard, for go run ./bench/injection
// (bench/injection/peers.go copies this file next to the guard's node_modules
// in a cache directory and runs it there).
//
//   node serve.mjs llm_guardrail|vard
//
// Reads JSON lines {"text": string} on stdin and writes one JSON line
// {"attack": bool, "score": number} per input line, in order, on stdout.
// A text the guard throws on ends the process with exit code 1 and the
// error on stderr.
import readline from "node:readline";

const judges = {
  // llm_guardrail@2.1.2 (ISC): word 1-2-gram TF-IDF (20,000 features) and a
  // logistic regression; checkInjection is its prompt-injection model at the
  // model's own threshold (0.5). score: the model's attack probability.
  async llm_guardrail() {
    // Its TF-IDF transform calls Object.keys on its 20,000-term vocabulary
    // for every text (~15 ms). Object.keys is memoized here for objects of
    // more than 10,000 keys (only the vocabularies, which never change), so
    // the package's own code runs unchanged, ~8 times faster, with the same
    // verdicts and scores.
    const keysOf = Object.keys;
    const memo = new WeakMap();
    Object.keys = (o) => {
      let k = memo.get(o);
      if (k === undefined) {
        k = keysOf(o);
        if (k.length > 10000) memo.set(o, k);
      }
      return k;
    };
    const { checkInjection } = await import("llm_guardrail");
    return async (text) => {
      const r = await checkInjection(text);
      return { attack: r.detected, score: r.confidence };
    };
  },
  // @andersmyrmel/vard@1.2.0 (MIT): regex patterns, each with a threat type
  // and a severity. attack: the moderate preset (its default) blocks the
  // text: an instruction-override, role-manipulation or prompt-leak pattern
  // of severity >= 0.7 (delimiters and encodings it only sanitizes). Its
  // 10,000-character input limit is lifted so that the patterns, not the
  // length, decide. score: the highest severity of any pattern that matched.
  async vard() {
    const { default: vard } = await import("@andersmyrmel/vard");
    const guard = vard.moderate().maxLength(Number.MAX_SAFE_INTEGER);
    let top = 0;
    let scorer = vard()
      .threshold(0)
      .maxLength(Number.MAX_SAFE_INTEGER)
      .onWarn((t) => {
        top = Math.max(top, t.severity);
      });
    for (const t of ["instructionOverride", "roleManipulation", "delimiterInjection", "systemPromptLeak", "encoding"]) {
      scorer = scorer.warn(t);
    }
    return async (text) => {
      top = 0;
      scorer.safeParse(text);
      return { attack: !guard.safeParse(text).safe, score: top };
    };
  },
};

const name = process.argv[2];
if (!judges[name]) {
  console.error(`serve.mjs: no peer ${JSON.stringify(name)} (peers: ${Object.keys(judges).join(", ")})`);
  process.exit(2);
}
const judge = await judges[name]();
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
let out = [];
for await (const line of rl) {
  if (line === "") continue;
  const { text } = JSON.parse(line);
  out.push(JSON.stringify(await judge(text)));
  if (out.length >= 256) {
    process.stdout.write(out.join("\n") + "\n");
    out = [];
  }
}
process.stdout.write(out.length ? out.join("\n") + "\n" : "");
