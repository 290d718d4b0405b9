//! Everything strata reads of what was measured for its models, in one
//! place: the storage's curve from a calibrate Recording (`calibration`:
//! the sweep's prediction and `strata model predict`), a run's Recording
//! (`run`: `strata model predict --from`), a calibrate Recording's NFS
//! points (`nfs`: `strata model nfs --from`), and a window's figures from a
//! Recording or an AWR or STATSPACK report (`window`: `strata model
//! --from`).
//!
//! Not for: the models (strata-model) or what the sweep and the prediction
//! compute from these figures (`sweep`, `predict_inputs`).

pub mod calibration;
pub mod nfs;
pub mod run;
pub mod window;
