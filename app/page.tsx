import { revalidatePath } from "next/cache";
import { after } from "next/server";
import { getDurable } from "./durable";
import { approval } from "./workflows/approval";
import { hello } from "./workflows/hello";

// A placeholder dashboard: the runs, newest first, buttons to start the demo workflows and to
// answer a waiting approval. Every action advances its run right after answering, like the routes.
export const dynamic = "force-dynamic";

async function advanceSoon(id: string) {
  const durable = await getDurable();
  after(async () => {
    await durable.advance(id, { budgetMs: 10_000 });
  });
  revalidatePath("/");
}

async function startHello(form: FormData) {
  "use server";
  const durable = await getDurable();
  const name = String(form.get("name") ?? "").trim().slice(0, 100) || "world";
  const { id } = await durable.start(hello, { name });
  await advanceSoon(id);
}

async function startApproval() {
  "use server";
  const durable = await getDurable();
  const { id } = await durable.start(approval, { docId: `doc-${Date.now().toString(36)}` });
  await advanceSoon(id);
}

async function decide(form: FormData) {
  "use server";
  const durable = await getDurable();
  const runId = String(form.get("runId"));
  await durable.signal({ runId, name: "decision", payload: { approved: form.get("approved") === "yes", by: "dashboard" } });
  await advanceSoon(runId);
}

export default async function Home() {
  const durable = await getDurable();
  const { runs } = await durable.list({ limit: 50 });
  return (
    <main>
      <h1>Durable runs</h1>
      <div style={{ display: "flex", gap: "1rem", marginBottom: "1rem" }}>
        <form action={startHello} style={{ display: "flex", gap: "0.5rem" }}>
          <input name="name" placeholder="world" aria-label="name" />
          <button type="submit">Start hello</button>
        </form>
        <form action={startApproval}>
          <button type="submit">Start approval</button>
        </form>
        <a href="/">Refresh</a>
      </div>
      {runs.length === 0 ? (
        <p>No runs yet.</p>
      ) : (
        <table cellPadding={6} style={{ borderCollapse: "collapse", width: "100%" }}>
          <thead>
            <tr style={{ textAlign: "left" }}>
              <th>id</th><th>workflow</th><th>status</th><th>waiting for</th><th>attempts</th><th>updated</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <tr key={run.id} style={{ borderTop: "1px solid #ddd" }}>
                <td><code>{run.id}</code></td>
                <td>{run.workflow}</td>
                <td>{run.status}{run.error ? `: ${run.error.message}` : ""}</td>
                <td>
                  {run.waitingFor ? `${run.waitingFor.kind} ${run.waitingFor.name}` : ""}
                  {run.waitingFor?.kind === "signal" && run.waitingFor.name === "decision" ? (
                    <form action={decide} style={{ display: "inline-flex", gap: "0.25rem", marginLeft: "0.5rem" }}>
                      <input type="hidden" name="runId" value={run.id} />
                      <button type="submit" name="approved" value="yes">Approve</button>
                      <button type="submit" name="approved" value="no">Reject</button>
                    </form>
                  ) : null}
                </td>
                <td>{run.attempts}</td>
                <td>{run.updatedAt}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
