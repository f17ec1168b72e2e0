export default function RfqView() {
  return <p className="muted">This view is not built yet.</p>;
}
