//! TODO (helper A)
