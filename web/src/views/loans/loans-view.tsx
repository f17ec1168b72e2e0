export default function LoansView() {
  return <p className="muted">This view is not built yet.</p>;
}
