export default function AccountView() {
  return <p className="muted">This view is not built yet.</p>;
}
