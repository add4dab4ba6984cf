/// Runs the same typed statement on the concrete connection of either
/// backend, for the few statements `MultiConnection` cannot express
/// (`ON CONFLICT`, `FOR UPDATE`). The body is compiled once per backend.
macro_rules! per_backend {
    ($conn:expr, $c:ident => $body:expr) => {
        match $conn {
            $crate::store::AnyConnection::Sqlite($c) => $body,
            #[cfg(feature = "postgres")]
            $crate::store::AnyConnection::Postgres($c) => $body,
        }
    };
}
