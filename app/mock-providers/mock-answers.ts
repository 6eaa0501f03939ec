import { createHash } from "node:crypto";

/**
 * What the mock model (./model.ts) writes when it is not asked to echo: short answers in plain
 * prose, so the research demo reads as if a model had written it. Nothing is random: the same
 * prompt always gets the same words, so tests can rely on them.
 *
 * The mock knows one subject well, the one this app is about (durable workflows: replay, receipts,
 * determinism, crashes); a prompt about it gets answers from the notes below. Any other prompt
 * gets a general answer built around the prompt's key terms. Three shapes of prompt are read:
 *   - a request for sub-questions (a JSON schema whose list is named `…questions`): `questionsFor`;
 *   - a question, alone or after a colon ("Answer briefly (sub-question 1): What…?"): `answerFor`;
 *   - "Question: …" with an "Approved outline:" and its numbered sub-questions: a final answer of
 *     three paragraphs (an opening, one sentence or two per sub-question, a closing).
 */

interface Note {
  /** Words of a prompt that make this note relevant. */
  keys: RegExp;
  /** The sub-question a researcher would ask first. */
  question: string;
  /** Its brief answer (the outline). */
  brief: string;
  /** What the final answer says about it. */
  detail: string;
}

const NOTES: Note[] = [
  {
    keys: /replay|from the top|re-?run|again|invocation|resume/i,
    question: "What does a workflow keep between one invocation and the next?",
    brief:
      "Nothing in memory. Each invocation runs the function again from its first line; what survives is " +
      "the run's row and the receipts of the steps it has finished.",
    detail:
      "No process holds a workflow while it waits: every invocation starts the function over, and the " +
      "database alone remembers how far the run got.",
  },
  {
    keys: /receipt|step|ledger|skip|finished|record/i,
    question: "What happens to a step that already finished when the code runs again?",
    brief:
      "It does not run again. Its receipt, the result recorded when it finished, is returned in its place, " +
      "so the replay moves through finished work in milliseconds.",
    detail:
      "A step that finished once is never executed twice: its recorded result answers the replay, so " +
      "going back to the top costs a few reads, not a second round of side effects.",
  },
  {
    keys: /determin|random|time|clock|same|path|order/i,
    question: "What must stay the same from one replay to the next?",
    brief:
      "The path through the code. Anything that can differ between runs, such as the time, a random " +
      "number or a network call, belongs inside a step, which records it once.",
    detail:
      "The rule that makes this safe is determinism between steps: the code takes the same path on every " +
      "replay, and whatever could change (the clock, randomness, the network) is recorded by a step.",
  },
  {
    keys: /crash|kill|fail|die|surviv|durable|lost|halfway/i,
    question: "What is lost when the process dies halfway through?",
    brief:
      "Only the step that was in flight. The next invocation replays the finished steps from their " +
      "receipts and runs that one step again, with the same idempotency key.",
    detail:
      "When a process dies halfway, only the step in flight is repeated, and it carries an idempotency " +
      "key derived from the run and the step, so the outside world sees one effect.",
  },
  {
    keys: /why|instead|benefit|alternative|trade|cost|snapshot|state/i,
    question: "Why replay rather than save the program's state?",
    brief:
      "A running function's stack cannot be stored and moved between machines, but its results can. " +
      "Replay needs only a row per run and a receipt per step.",
    detail:
      "Replaying is chosen over saving the program's state because a stack cannot be stored portably, " +
      "while results can: any process, on any machine, can continue a run another one started.",
  },
];

/** Is the prompt about what this app does? Then the notes answer it. */
const ON_SUBJECT = /durable|workflow|replay|receipt|\bsteps?\b|\bruns?\b/i;

/** Sub-questions of a question off the subject, about its key terms, and how each is answered. */
const GENERAL: { question: (about: string) => string; answer: RegExp; brief: (about: string) => string }[] = [
  {
    question: (about) => `What exactly is being asked about ${about}?`,
    answer: /^What exactly is being asked about (.+)\?$/,
    brief: (about) => `In plain terms: what holds for ${about}, and under which conditions it stops holding.`,
  },
  {
    question: (about) => `Which facts about ${about} does the answer depend on?`,
    answer: /^Which facts about (.+) does the answer depend on\?$/,
    brief: (about) =>
      `Mostly the ones that can be measured about ${about}: what it costs, how often it happens, and who it affects.`,
  },
  {
    question: () => "What would change the answer?",
    answer: /^What would change the answer\?$/,
    brief: () => "A different starting point. If the facts it rests on change, the conclusion changes with them.",
  },
  {
    question: () => "Where do people usually go wrong?",
    answer: /^Where do people usually go wrong\?$/,
    brief: () =>
      "By generalising from a single case, and by skipping the edge cases, which is where the real trade-offs are.",
  },
];

const GENERAL_SENTENCES = [
  "Start from what has to stay true, and the rest follows from it.",
  "A brief answer leaves out the edge cases, and they are where the real trade-offs are.",
  "Where the facts are uncertain, a small experiment settles more than a long argument.",
];

/** Words that carry no subject: never a key term. */
const STOP = new Set(
  [
    "about above after again against asked because before being below between change could depend does doing",
    "during each exactly facts first from have having here into itself just more most other over people same",
    "should some such than that their them then there these they this those through under until usually very",
    "what when where which while whom will with would wrong your answer briefly question write final approved",
    "outline split researcher sub-question sub-questions",
  ]
    .join(" ")
    .split(" "),
);

/** The sub-questions a researcher would answer first: the best-matching notes, or general ones. */
export function questionsFor(prompt: string, count: number): string[] {
  const asked = questionOf(prompt);
  const pool = ON_SUBJECT.test(asked)
    ? ranked(asked).map((note) => note.question)
    : GENERAL.map((g) => g.question(phrase(keyTerms(asked))));
  return Array.from({ length: count }, (_, i) => pool[i % pool.length]!);
}

/** An answer to the prompt: a final answer when it carries an approved outline, else a brief one. */
export function answerFor(prompt: string): string {
  if (/approved outline:/i.test(prompt)) return finalAnswer(prompt);
  const asked = questionOf(prompt);
  const note = NOTES.find((n) => n.question === asked) ?? (ON_SUBJECT.test(asked) ? ranked(asked)[0] : undefined);
  if (note) return note.brief;
  for (const general of GENERAL) {
    const match = general.answer.exec(asked);
    if (match) return general.brief(match[1] ?? "");
  }
  const about = phrase(keyTerms(asked));
  const opening = `The short answer: it comes down to a few facts about ${about}, and most can be checked.`;
  return [opening, ...pick(GENERAL_SENTENCES, 1, asked)].join(" ");
}

/** Three paragraphs: an opening, what the outline found, a closing. */
function finalAnswer(prompt: string): string {
  const question = /^question:\s*(.+)$/im.exec(prompt)?.[1]?.trim() ?? questionOf(prompt);
  const asked = [...prompt.matchAll(/^\s*\d+\.\s+(.+)$/gm)].map((m) => m[1]!.trim());
  if (ON_SUBJECT.test(question)) {
    const notes = asked.map((q) => NOTES.find((n) => n.question === q)).filter((n): n is Note => !!n);
    const body = (notes.length > 0 ? notes : ranked(question).slice(0, 3)).map((n) => n.detail);
    return [
      "In short: a durable workflow is a plain function that any process can stop and pick up again, and " +
        "running it from the top, answering each finished step from its receipt, is how it is picked up.",
      body.join(" "),
      "The price is one rule to keep, deterministic code between steps; what it buys is a workflow that " +
        "survives crashes, deploys and timeouts with nothing but a database.",
    ].join("\n\n");
  }
  return [
    `The answer turns on a few facts about ${phrase(keyTerms(question))}, and most of them can be checked.`,
    "Taken one at a time, the questions of the outline narrow it down: what is asked, which facts it " +
      `rests on, and what would change it. ${pick(GENERAL_SENTENCES, 1, question)[0]}`,
    "Where those facts hold, the conclusion holds with them; where they do not, check them first.",
  ].join("\n\n");
}

/** The question in a prompt: its "Question:" line, else what follows the last colon of its last line. */
function questionOf(prompt: string): string {
  const labelled = /^question:\s*(.+)$/im.exec(prompt)?.[1];
  if (labelled) return labelled.trim();
  const last = prompt.trim().split("\n").pop() ?? "";
  const colon = last.lastIndexOf(": ");
  return (colon === -1 ? last : last.slice(colon + 2)).trim();
}

/** The notes in order of relevance to the text (ties keep the order above). */
function ranked(text: string): Note[] {
  const score = (note: Note) => (text.match(new RegExp(note.keys.source, "gi")) ?? []).length;
  return NOTES.map((note, i) => ({ note, i, s: score(note) }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.note);
}

/** The two longest words of the text that carry its meaning, in the order they come. */
function keyTerms(text: string): string[] {
  const words = [...new Set(text.toLowerCase().match(/[a-z][a-z'-]{3,}/g) ?? [])].filter((w) => !STOP.has(w));
  const longest = new Set([...words].sort((a, b) => b.length - a.length).slice(0, 2));
  return words.filter((w) => longest.has(w));
}

function phrase(terms: string[]): string {
  return terms.length === 0 ? "the question" : terms.join(" and ");
}

/** `count` of the sentences, chosen by the text: the same text, the same choice. */
function pick(sentences: string[], count: number, text: string): string[] {
  const start = createHash("sha256").update(text).digest().readUInt32BE(0) % sentences.length;
  return Array.from(
    { length: Math.min(count, sentences.length) },
    (_, i) => sentences[(start + i) % sentences.length]!,
  );
}
