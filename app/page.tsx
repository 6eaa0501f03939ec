import { revalidatePath } from "next/cache";
import { after } from "next/server";
import { getDurable } from "./durable";
import { hello } from "./workflows/hello";

// A placeholder dashboard: the runs, newest first, and a button that starts one.
export const dynamic = "force-dynamic";

async function startHello(form: FormData) {
  "use server";
  const durable = await getDurable();
  const name = String(form.get("name") ?? "").trim() || "world";
  const { id } = await durable.start(hello, { name });
  // Move it right away rather than at the next cron tick; the local cron would pick it up too.
  after(() => durable.advance(id, { budgetMs: 10_000 }).then(() => undefined));
  revalidatePath("/");
}

export default async function Home() {
  const durable = await getDurable();
  const { runs } = await durable.list({ limit: 50 });
  return (
    <main>
      <h1>Durable runs</h1>
      <form action={startHello} style={{ display: "flex", gap: "0.5rem", marginBottom: "1rem" }}>
        <input name="name" placeholder="world" aria-label="name" />
        <button type="submit">Start a hello run</button>
      </form>
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
                <td>{run.waitingFor ? `${run.waitingFor.kind} ${run.waitingFor.name}` : ""}</td>
                <td>{run.attempts}</td>
                <td>{run.updatedAt}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p><a href="/">Refresh</a></p>
    </main>
  );
}
