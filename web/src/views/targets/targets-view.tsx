export default function TargetsView() {
  return <p className="muted">This view is not built yet.</p>;
}
