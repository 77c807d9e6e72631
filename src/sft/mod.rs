//! The SFT corpus (agent trajectories with loss masks, SPEC §3). So far: rendering
//! trajectories into tokenized views with a chat template ([`render`]), verified token
//! for token against Hugging Face's `apply_chat_template` on the shared reference views.
//! Loading trajectories and views, the contract checks and the pool audit are not built
//! yet.

pub mod render;
pub mod build;
pub mod views;
