//! The deterministic offline [`ModelProvider`]: the default when no model is
//! configured, so that what asks a model (battles' AI judge today) works end
//! to end on a machine without network or model server.
//!
//! It answers every request with the caller's own stand-in answer
//! ([`ChatRequest::stand_in`]: the battle judge's is valid judge JSON from a
//! transparent heuristic, which lives with the judge in lf-battle), or, for
//! a request that has none, a short deterministic text saying no model is
//! configured. It names itself [`OFFLINE_MODEL_NAME`] as the `model` of
//! every answer, which results record: nobody mistakes its answers for a
//! model's.

use async_trait::async_trait;
use lf_core::{ChatRequest, ChatResponse, LfResult, ModelProvider, OFFLINE_MODEL_NAME};

/// See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct OfflineProvider;

impl OfflineProvider {
    /// The provider.
    pub const fn new() -> Self {
        OfflineProvider
    }
}

#[async_trait]
impl ModelProvider for OfflineProvider {
    fn name(&self) -> &str {
        OFFLINE_MODEL_NAME
    }

    async fn chat(&self, request: ChatRequest) -> LfResult<ChatResponse> {
        let text = match request.stand_in {
            Some(answer) => answer,
            None => format!(
                "[{OFFLINE_MODEL_NAME}] No model is configured on this server, so this is a placeholder answer ({} characters of input received). Set LENSERFIGHT_MODEL_BASE_URL (and _MODEL_API_KEY, _MODEL_NAME) to use a real model.",
                request.system.chars().count() + request.user.chars().count()
            ),
        };
        Ok(ChatResponse::new(text, OFFLINE_MODEL_NAME))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_answers_the_stand_in_or_a_placeholder() {
        let mut request = ChatRequest::new("Be brief.", "héllo");
        let placeholder = pollster::block_on(OfflineProvider.chat(request.clone())).unwrap();
        assert_eq!(
            placeholder,
            ChatResponse::new(
                "[offline-deterministic] No model is configured on this server, so this is a placeholder answer (14 characters of input received). Set LENSERFIGHT_MODEL_BASE_URL (and _MODEL_API_KEY, _MODEL_NAME) to use a real model.",
                "offline-deterministic",
            )
        );
        request.stand_in = Some(r#"{"verdicts":[]}"#.into());
        let answer = pollster::block_on(OfflineProvider.chat(request)).unwrap();
        assert_eq!((answer.text.as_str(), answer.model.as_str()), (r#"{"verdicts":[]}"#, OFFLINE_MODEL_NAME));
        assert_eq!(OfflineProvider.name(), OFFLINE_MODEL_NAME);
    }
}
