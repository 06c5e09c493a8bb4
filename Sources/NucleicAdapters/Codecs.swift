public enum Codecs {}
