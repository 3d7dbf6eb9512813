"""Making and measuring detectors: data loaders, synthetic data, training, evaluation,
scores and long-context tools."""
