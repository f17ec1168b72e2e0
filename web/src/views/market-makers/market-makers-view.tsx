export default function MarketMakersView() {
  return <p className="muted">This view is not built yet.</p>;
}
