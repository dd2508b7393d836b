//! stdio: newline-delimited JSON-RPC on stdin/stdout, nothing else on stdout. One
//! workspace for the life of the process; stdin EOF ends it with exit code 0.

use crate::server::BorisServer;
use crate::tools::Shared;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use rmcp::service::ServerInitializeError;
use rmcp::transport::{IntoTransport, Transport};
use rmcp::{RoleServer, ServiceExt};
use std::sync::Arc;

pub async fn serve(shared: Arc<Shared>) -> anyhow::Result<()> {
    let server = BorisServer::new(shared);
    let transport = PreInitFilter {
        inner: IntoTransport::<RoleServer, _, _>::into_transport(rmcp::transport::stdio()),
        lifecycle_started: false,
    };
    match server.serve(transport).await {
        Ok(running) => {
            let reason = running.waiting().await?;
            tracing::info!(?reason, "stdio session ended");
            Ok(())
        }
        // stdin closed before any session began: nothing went wrong.
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("stdin closed before initialize");
            Ok(())
        }
        Err(e) => Err(anyhow::anyhow!("the MCP session could not start: {e}")),
    }
}

/// rmcp ends the session if the first message that is not a ping or `server/discover`
/// is a notification or a response. A stray `notifications/initialized` (or a
/// `notifications/cancelled` for a request that never arrived) before `initialize` would
/// then stop a server that must keep serving, so such messages are dropped until a
/// lifecycle has begun. Requests always pass: rmcp answers each with a result or a
/// JSON-RPC error. At end of input it cancels in-flight calls and kills every process
/// group Boris started.
struct PreInitFilter<T> {
    inner: T,
    lifecycle_started: bool,
}

impl<T> Transport<RoleServer> for PreInitFilter<T>
where
    T: Transport<RoleServer>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleServer>> {
        loop {
            let Some(msg) = self.inner.receive().await else {
                // stdin closed: nobody can read a result any more. rmcp gives in-flight
                // calls a few seconds before cancelling them; their commands (and every
                // background task) are killed now instead, so the process exits at once.
                crate::exec::begin_shutdown();
                return None;
            };
            if self.lifecycle_started {
                return Some(msg);
            }
            match &msg {
                ClientJsonRpcMessage::Request(req) => {
                    let bootstrap = matches!(
                        req.request,
                        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
                    );
                    // A request with incomplete stateless metadata is answered with an
                    // error and the lifecycle stays open; treating it as started is
                    // harmless because rmcp itself keeps waiting in that case.
                    if !bootstrap {
                        self.lifecycle_started = true;
                    }
                    return Some(msg);
                }
                _ => {
                    tracing::debug!("dropping a non-request message received before initialize");
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
