public enum Runtime {}
