import Link from "next/link";

export default function RunNotFound() {
  return (
    <section className="panel notice">
      <h1>No such run</h1>
      <p>It may have been started on another database.</p>
      <p>
        <Link href="/">← All runs</Link>
      </p>
    </section>
  );
}
